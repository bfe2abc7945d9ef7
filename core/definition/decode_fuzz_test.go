package definition_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/definition"
	"github.com/mcpward/mcpward/ports"
)

// decodeFuzzEntryProblems and decodeFuzzRefusals are every word Decode may
// put in Entry.Problem and Definition.Refusal.
var (
	decodeFuzzEntryProblems = map[string]bool{
		definition.EntryDuplicateName: true, definition.EntryInvalidName: true, definition.EntryNotObject: true,
		definition.EntryDuplicateField: true, definition.EntryMissingType: true, definition.EntryUnknownType: true,
		definition.EntryUnknownField: true, definition.EntryFieldNotForTransport: true, definition.EntryInvalidField: true,
		definition.EntryMissingCommand: true, definition.EntryMissingURL: true,
	}
	decodeFuzzRefusals = map[string]bool{
		"": true, definition.RefusalTransportSSE: true, definition.RefusalTransportWS: true,
		definition.RefusalOAuthClientSecret: true, definition.RefusalHeadersHelperNotArgv: true,
		definition.RefusalSecretInCommand: true, definition.RefusalSecretInCwd: true, definition.RefusalSecretInURL: true,
	}
	decodeFuzzSourceProblems = map[definition.ProblemKind]bool{
		definition.ProblemMalformedDocument: true, definition.ProblemMalformedRoot: true,
		definition.ProblemMalformedServers: true, definition.ProblemMalformedOverlay: true,
		definition.ProblemMalformedPolicy: true,
	}
)

// decodeFuzzSeeds adds every testdata JSON document as a seed.
func decodeFuzzSeeds(f *testing.F) [][]byte {
	var seeds [][]byte
	for _, glob := range []string{"testdata/decode_*.json", "testdata/resolve_*/*.json"} {
		paths, err := filepath.Glob(glob)
		require.NoError(f, err)
		for _, p := range paths {
			data, err := os.ReadFile(p)
			require.NoError(f, err)
			seeds = append(seeds, data)
		}
	}
	return seeds
}

// decodeFuzzCheck asserts Decode's invariants on doc.
func decodeFuzzCheck(t *testing.T, src definition.Source, doc definition.Document) {
	t.Helper()
	require.Equal(t, src.Tier, doc.Tier)
	require.Equal(t, src.Origin, doc.Origin)
	if doc.Problem != nil {
		require.True(t, decodeFuzzSourceProblems[doc.Problem.Kind], "problem kind %q", doc.Problem.Kind)
		require.Equal(t, src.Tier, doc.Problem.Tier)
		require.Equal(t, src.Origin, doc.Problem.Origin)
		if doc.Problem.Kind != definition.ProblemMalformedOverlay && doc.Problem.Kind != definition.ProblemMalformedPolicy {
			require.Empty(t, doc.Entries, "a wholly unusable document has no entries")
		}
		if doc.Problem.Kind == definition.ProblemMalformedPolicy {
			require.Nil(t, doc.Policy, "a malformed policy is not used in part")
		}
		require.Empty(t, doc.Disabled, "a problem document has no overlay")
	}
	for i, e := range doc.Entries {
		if i > 0 {
			require.Less(t, doc.Entries[i-1].Name, e.Name, "entries strictly sorted")
		}
		require.True(t, utf8.ValidString(e.Name))
		if e.Name == "" || e.Name[0] != '"' {
			for j := 0; j < len(e.Name); j++ {
				c := e.Name[j]
				require.True(t, c == '_' || c == '.' || c == '-' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9',
					"a kept name is valid or quoted")
			}
			require.NotEmpty(t, e.Name)
			require.LessOrEqual(t, len(e.Name), 64)
		}
		decodeFuzzPrintable(t, e.Name)
		decodeFuzzPrintable(t, e.Field)
		require.True(t, (e.Def == nil) != (e.Problem == ""), "exactly one of Def and Problem")
		if e.Def == nil {
			require.True(t, decodeFuzzEntryProblems[e.Problem], "problem %q", e.Problem)
			continue
		}
		require.Empty(t, e.Field)
		d := e.Def
		require.Equal(t, e.Name, d.Name)
		require.Equal(t, src.Tier, d.Tier)
		require.Equal(t, src.Origin, d.Origin)
		require.True(t, decodeFuzzRefusals[d.Refusal], "refusal %q", d.Refusal)
		switch d.Kind {
		case definition.KindStdio:
			require.NotEmpty(t, d.Command)
			require.Empty(t, d.URL)
			require.Nil(t, d.Headers)
			require.Nil(t, d.HeadersHelper)
			require.Nil(t, d.OAuth)
		case definition.KindHTTP, definition.KindSSE, definition.KindWS:
			require.NotEmpty(t, d.URL)
			require.Empty(t, d.Command)
			require.Nil(t, d.Args)
			require.Nil(t, d.Env)
			require.Empty(t, d.Cwd)
		default:
			t.Fatalf("kind %q", d.Kind)
		}
		if d.OAuth != nil && d.OAuth.CallbackPort != 0 {
			require.True(t, d.OAuth.CallbackPort >= 1 && d.OAuth.CallbackPort <= 65535)
		}
	}
	for i, n := range doc.Disabled {
		if i > 0 {
			require.Less(t, doc.Disabled[i-1], n, "overlay strictly sorted")
		}
		decodeFuzzPrintable(t, n)
	}
}

// decodeFuzzPrintable asserts s is printable ASCII (no control character
// can forge a log line).
func decodeFuzzPrintable(t *testing.T, s string) {
	t.Helper()
	for i := 0; i < len(s); i++ {
		require.True(t, s[i] >= 0x20 && s[i] < 0x7f, "printable ASCII")
	}
}

// FuzzDecode feeds arbitrary bytes to Decode: it never panics, is
// deterministic, keeps its invariants, and Resolve accepts its output.
func FuzzDecode(f *testing.F) {
	for _, s := range decodeFuzzSeeds(f) {
		f.Add(s)
	}
	for _, s := range []string{``, `{}`, `[]`, `null`, `{"mcpServers":{"a":{"command":"x"},"a":1}}`,
		`{"mcpServers":{"a":{"url":"u","oauth":{"callbackPort":1e400}}}}`, "{\"mcpServers\":{\"\xff\":1}}",
		`{"mcpServers":{"\ud800":1,"\udbff":2}}`, `{"disabledMcpServers":["\u0000",""]}`,
		`{"allowedMcpServers":[{"serverName":"a"},{"serverCommand":["x","y"]},{"serverUrl":"https://*.e/*"}],"deniedMcpServers":[{"serverName":"b"}],"deniedTools":["a/*"],"mcpServers":{"a":{"command":"x","args":["y"]}},"disabledMcpServers":["a"]}`,
		`{"deniedMcpServers":[{"serverName":"b","serverUrl":"u"}],"disabledMcpServers":["a"],"mcpServers":{"a":{"command":"x"}}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		src := definition.Source{Tier: ports.TierManaged, Origin: "fuzz", Data: data}
		doc := definition.Decode(src)
		decodeFuzzCheck(t, src, doc)
		require.Equal(t, doc, definition.Decode(src), "deterministic")

		other := definition.Decode(definition.Source{Tier: ports.TierUser, Origin: "fuzz2", Data: data})
		res := definition.Resolve([]definition.Document{other, doc})
		for i, s := range res.Servers {
			if i > 0 {
				require.Less(t, res.Servers[i-1].Name, s.Name)
			}
			if s.State == definition.StateResolved {
				require.NotNil(t, s.Def)
				require.Equal(t, ports.TierManaged, s.Winner.Tier)
			}
		}
	})
}

// decodeFuzzPlacements are documents with one value position, %s, where
// FuzzDecodeCanary plants a JSON-encoded canary.
var decodeFuzzPlacements = []string{
	`{"mcpServers":{"s":{"command":"c","env":{"K":%s}}}}`,
	`{"mcpServers":{"s":{"command":"c","args":["a",%s]}}}`,
	`{"mcpServers":{"s":{"command":%s}}}`,
	`{"mcpServers":{"s":{"command":"c","cwd":%s}}}`,
	`{"mcpServers":{"s":{"type":"http","url":%s}}}`,
	`{"mcpServers":{"s":{"url":"u","headers":{"Authorization":%s}}}}`,
	`{"mcpServers":{"s":{"url":"u","headersHelper":%s}}}`,
	`{"mcpServers":{"s":{"url":"u","headersHelper":["h",%s]}}}`,
	`{"mcpServers":{"s":{"url":"u","oauth":{"clientId":%s}}}}`,
	`{"mcpServers":{"s":{"url":"u","oauth":{"clientSecret":%s}}}}`,
	`{"mcpServers":{"s":{"url":"u","oauth":{"scopes":[%s]}}}}`,
	`{"mcpServers":{"s":{"url":"u","oauth":{"callbackPort":%s}}}}`,
	`{"mcpServers":{"s":{"url":"u","oauth":{"authServerMetadataUrl":%s}}}}`,
	`{"mcpServers":{"s":{"type":%s,"url":"u"}}}`,
	`{"mcpServers":{"s":{"command":"c","requiresTrustedWorkspace":%s}}}`,
	`{"mcpServers":{"s":{"command":"c","shell":%s}}}`,
	`{"mcpServers":{"s":{"command":"c","url":%s}}}`,
	`{"mcpServers":{"s":{"command":%s,"command":"x"}}}`,
	`{"mcpServers":{"s":{"type":"sse","url":%s}}}`,
	`{"mcpServers":{"s":{"type":"ws","url":"u","headers":{"X":%s}}}}`,
	`{"mcpServers":{"s":%s}}`,
	`{"mcpServers":%s}`,
	`{"disabledMcpServers":{"k":%s},"mcpServers":{"s":{"command":"c"}}}`,
	`{"other":%s,"mcpServers":{"s":{"command":"c"}}}`,
	`%s`,
}

// decodeFuzzWraps are the JSON shapes the canary string is wrapped in.
var decodeFuzzWraps = []string{`%s`, `[%s]`, `{"k":%s}`, `[1,{"k":[%s]}]`, `{"k":%s,"k":%s}`}

// decodeFuzzVocabulary is every text an output string may legitimately be
// made of; a canary found inside it proves nothing and is skipped.
func decodeFuzzVocabulary() string {
	words := []string{
		string(definition.ProblemUnreadable), string(definition.ProblemMalformedDocument), string(definition.ProblemMalformedRoot),
		string(definition.ProblemMalformedServers), string(definition.ProblemMalformedOverlay), string(definition.ProblemUnknownTier),
		definition.ReasonAmbiguousWithinTier, definition.ReasonManagedUnreadable, definition.ReasonDisabled, definition.ReasonMalformedEntry,
		string(definition.StateResolved), string(definition.StateUnresolved), string(definition.StateBlocked),
		string(definition.StateDisabled), string(definition.StateRefused),
		"oauth.clientId oauth.scopes oauth.callbackPort oauth.authServerMetadataUrl oauth.clientMetadataUrl oauth.clientSecret requiresTrustedWorkspace headersHelper",
	}
	for w := range decodeFuzzEntryProblems {
		words = append(words, w)
	}
	for w := range decodeFuzzRefusals {
		words = append(words, w)
	}
	words = append(words, decodeFuzzPlacements...)
	words = append(words, decodeFuzzWraps...)
	return strings.Join(words, "\n")
}

// FuzzDecodeCanary plants an arbitrary string as a value, in many shapes
// and positions, and checks that it never reaches a problem, field, name,
// refusal or resolution reason.
func FuzzDecodeCanary(f *testing.F) {
	for _, s := range []string{"CANARY-secret", "ghp_0123456789abcdefghij", "Bearer tok", "sk-live-xyz", "stdio",
		"https://user:pw@host/p?q=1", "a\r\nb", "\x00nul", "€uro", "  spaced  ", "${TOKEN}"} {
		for i := range len(decodeFuzzPlacements) {
			f.Add(uint16(i), s)
		}
	}
	vocab := decodeFuzzVocabulary()
	f.Fuzz(func(t *testing.T, pos uint16, canary string) {
		if !utf8.ValidString(canary) || len(canary) < 4 || strings.Contains(vocab, canary) {
			t.Skip("not a distinctive canary")
		}
		enc, err := json.Marshal(canary)
		require.NoError(t, err)
		wrap := decodeFuzzWraps[int(pos)/len(decodeFuzzPlacements)%len(decodeFuzzWraps)]
		value := strings.ReplaceAll(wrap, "%s", string(enc))
		data := strings.ReplaceAll(decodeFuzzPlacements[int(pos)%len(decodeFuzzPlacements)], "%s", value)
		require.True(t, json.Valid([]byte(data)))

		src := definition.Source{Tier: ports.TierProject, Origin: "repo/.mcp.json", Data: []byte(data)}
		doc := definition.Decode(src)
		decodeFuzzCheck(t, src, doc)
		var outputs []string
		if doc.Problem != nil {
			outputs = append(outputs, string(doc.Problem.Kind))
		}
		for _, e := range doc.Entries {
			outputs = append(outputs, e.Name, e.Problem, e.Field)
			if e.Def != nil {
				outputs = append(outputs, e.Def.Refusal)
			}
		}
		outputs = append(outputs, doc.Disabled...)
		res := definition.Resolve([]definition.Document{doc})
		for _, s := range res.Servers {
			outputs = append(outputs, s.Name, s.Reason, s.Field, string(s.State))
		}
		for _, o := range outputs {
			require.NotContains(t, o, canary, "a planted value reached an output")
		}
	})
}
