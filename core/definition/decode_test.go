package definition_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/definition"
	"github.com/mcpward/mcpward/ports"
)

// decodeTestSource is a user-tier source of the given JSON text.
func decodeTestSource(data string) definition.Source {
	return definition.Source{Tier: ports.TierUser, Origin: "/home/u/.mcp.json", Data: []byte(data)}
}

// decodeTestOne decodes a document whose mcpServers holds the single entry
// "s" with the given JSON value, and returns that entry.
func decodeTestOne(t *testing.T, entry string) definition.Entry {
	t.Helper()
	doc := definition.Decode(decodeTestSource(`{"mcpServers":{"s":` + entry + `}}`))
	require.Nil(t, doc.Problem)
	require.Len(t, doc.Entries, 1)
	require.Equal(t, "s", doc.Entries[0].Name)
	return doc.Entries[0]
}

func TestDecodeSourceProblems(t *testing.T) {
	deep := strings.Repeat("[", 10001) + strings.Repeat("]", 10001)
	tests := []struct {
		name         string
		src          definition.Source
		want         definition.ProblemKind // "" for none
		wantEntries  []string
		wantDisabled []string
	}{
		{name: "unreadable even with valid bytes", src: definition.Source{Tier: ports.TierManaged, Origin: "/etc/m.json",
			Data: []byte(`{"mcpServers":{"a":{"command":"x"}}}`), ReadErr: errors.New("permission denied")},
			want: definition.ProblemUnreadable},
		{name: "empty bytes", src: decodeTestSource(""), want: definition.ProblemMalformedDocument},
		{name: "whitespace only", src: decodeTestSource(" \n\t "), want: definition.ProblemMalformedDocument},
		{name: "trailing garbage", src: decodeTestSource(`{"mcpServers":{}} x`), want: definition.ProblemMalformedDocument},
		{name: "two values", src: decodeTestSource(`{}{}`), want: definition.ProblemMalformedDocument},
		{name: "trailing comma", src: decodeTestSource(`{"mcpServers":{},}`), want: definition.ProblemMalformedDocument},
		{name: "truncated", src: decodeTestSource(`{"mcpServers":{"a":{"command":"x"}}`), want: definition.ProblemMalformedDocument},
		{name: "comment", src: decodeTestSource("// c\n{}"), want: definition.ProblemMalformedDocument},
		{name: "invalid utf-8 inside a string", src: decodeTestSource("{\"mcpServers\":{\"a\":{\"command\":\"\xff\"}}}"),
			want: definition.ProblemMalformedDocument},
		{name: "byte order mark", src: decodeTestSource("\xef\xbb\xbf{}"), want: definition.ProblemMalformedDocument},
		{name: "nesting too deep", src: decodeTestSource(`{"x":` + deep + `}`), want: definition.ProblemMalformedDocument},
		{name: "duplicate mcpServers", src: decodeTestSource(`{"mcpServers":{"a":{"command":"x"}},"mcpServers":{}}`),
			want: definition.ProblemMalformedDocument},
		{name: "root array", src: decodeTestSource(`[]`), want: definition.ProblemMalformedRoot},
		{name: "root string", src: decodeTestSource(`"mcpServers"`), want: definition.ProblemMalformedRoot},
		{name: "root null", src: decodeTestSource(`null`), want: definition.ProblemMalformedRoot},
		{name: "root number", src: decodeTestSource(`1`), want: definition.ProblemMalformedRoot},
		{name: "servers array", src: decodeTestSource(`{"mcpServers":[{"command":"x"}]}`), want: definition.ProblemMalformedServers},
		{name: "servers string", src: decodeTestSource(`{"mcpServers":"x"}`), want: definition.ProblemMalformedServers},
		{name: "servers null", src: decodeTestSource(`{"mcpServers":null}`), want: definition.ProblemMalformedServers},
		{name: "servers bool", src: decodeTestSource(`{"mcpServers":true}`), want: definition.ProblemMalformedServers},
		{name: "servers bad and overlay bad reports servers",
			src: decodeTestSource(`{"mcpServers":1,"disabledMcpServers":1}`), want: definition.ProblemMalformedServers},
		{name: "overlay not array keeps entries",
			src:  decodeTestSource(`{"mcpServers":{"a":{"command":"x"}},"disabledMcpServers":"a"}`),
			want: definition.ProblemMalformedOverlay, wantEntries: []string{"a"}},
		{name: "overlay with non-string drops whole overlay",
			src:  decodeTestSource(`{"mcpServers":{"a":{"command":"x"}},"disabledMcpServers":["a",1]}`),
			want: definition.ProblemMalformedOverlay, wantEntries: []string{"a"}},
		{name: "overlay null", src: decodeTestSource(`{"disabledMcpServers":null}`), want: definition.ProblemMalformedOverlay},
		{name: "duplicate overlay key",
			src:  decodeTestSource(`{"disabledMcpServers":["a"],"disabledMcpServers":["b"],"mcpServers":{"a":{"command":"x"}}}`),
			want: definition.ProblemMalformedOverlay, wantEntries: []string{"a"}},
		{name: "servers absent", src: decodeTestSource(`{}`)},
		{name: "servers empty", src: decodeTestSource(`{"mcpServers":{}}`)},
		{name: "unknown root keys ignored, even malformed-looking ones",
			src:         decodeTestSource(`{"theme":"dark","permissions":{"allow":[1,null]},"x":1,"x":2,"mcpServers":{"a":{"command":"x"}}}`),
			wantEntries: []string{"a"}},
		{name: "case-mismatched root keys are not the schema's",
			src:  decodeTestSource(`{"MCPServers":{"a":{"command":"x"}},"mcpservers":{"b":{"command":"x"}},"DisabledMcpServers":1}`),
			want: ""},
		{name: "overlay sorted and de-duplicated, invalid names quoted",
			src:          decodeTestSource(`{"disabledMcpServers":["b","a","b","a b",""]}`),
			wantDisabled: []string{`""`, `"a b"`, "a", "b"}},
		{name: "empty overlay", src: decodeTestSource(`{"disabledMcpServers":[]}`)},
		{name: "overlay alone", src: decodeTestSource(`{"disabledMcpServers":["z"]}`), wantDisabled: []string{"z"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := definition.Decode(tt.src)
			assert.Equal(t, tt.src.Tier, doc.Tier)
			assert.Equal(t, tt.src.Origin, doc.Origin)
			if tt.want == "" {
				assert.Nil(t, doc.Problem)
			} else {
				require.NotNil(t, doc.Problem)
				assert.Equal(t, definition.SourceProblem{Tier: tt.src.Tier, Origin: tt.src.Origin, Kind: tt.want}, *doc.Problem)
			}
			var names []string
			for _, e := range doc.Entries {
				names = append(names, e.Name)
			}
			assert.Equal(t, tt.wantEntries, names)
			assert.Equal(t, tt.wantDisabled, doc.Disabled)
		})
	}
}

func TestDecodeEntryProblems(t *testing.T) {
	tests := []struct {
		name, entry, problem, field string
	}{
		// entry_not_object
		{"entry string", `"npx server"`, definition.EntryNotObject, ""},
		{"entry array", `["npx"]`, definition.EntryNotObject, ""},
		{"entry null", `null`, definition.EntryNotObject, ""},
		{"entry number", `3`, definition.EntryNotObject, ""},
		// duplicate_field
		{"duplicate command", `{"command":"a","command":"b"}`, definition.EntryDuplicateField, "command"},
		{"duplicate type", `{"type":"stdio","command":"a","type":"http"}`, definition.EntryDuplicateField, "type"},
		{"duplicate unknown key quoted", `{"command":"a","x y":1,"x y":2}`, definition.EntryDuplicateField, `"x y"`},
		{"duplicate env key", `{"command":"a","env":{"K":"1","K":"2"}}`, definition.EntryDuplicateField, "env"},
		{"duplicate header ignoring case", `{"url":"u","headers":{"Authorization":"a","authorization":"b"}}`, definition.EntryDuplicateField, "headers"},
		{"duplicate oauth key", `{"url":"u","oauth":{"clientId":"a","clientId":"b"}}`, definition.EntryDuplicateField, "oauth.clientId"},
		{"duplicate wins over unknown field", `{"shell":1,"command":"a","command":"a"}`, definition.EntryDuplicateField, "command"},
		// type
		{"missing type empty object", `{}`, definition.EntryMissingType, "type"},
		{"missing type args only", `{"args":["a"],"env":{}}`, definition.EntryMissingType, "type"},
		{"URL does not infer http", `{"URL":"https://x"}`, definition.EntryMissingType, "type"},
		{"Command does not infer stdio", `{"Command":"npx"}`, definition.EntryMissingType, "type"},
		{"unknown type", `{"type":"grpc","url":"u"}`, definition.EntryUnknownType, "type"},
		{"type case mismatch", `{"type":"HTTP","url":"u"}`, definition.EntryUnknownType, "type"},
		{"type streamable-http", `{"type":"streamable-http","url":"u"}`, definition.EntryUnknownType, "type"},
		{"type empty", `{"type":"","command":"a"}`, definition.EntryUnknownType, "type"},
		{"type number", `{"type":1,"command":"a"}`, definition.EntryInvalidField, "type"},
		{"type null", `{"type":null,"command":"a"}`, definition.EntryInvalidField, "type"},
		// unknown_field (fail closed)
		{"unknown shell", `{"command":"a","shell":true}`, definition.EntryUnknownField, "shell"},
		{"unknown disabled", `{"command":"a","disabled":true}`, definition.EntryUnknownField, "disabled"},
		{"case-mismatched Command beside command", `{"command":"a","Command":"b"}`, definition.EntryUnknownField, "Command"},
		{"case-mismatched URL on http", `{"type":"http","URL":"https://x"}`, definition.EntryUnknownField, "URL"},
		{"case-mismatched URL beside url", `{"url":"https://x","URL":"https://y"}`, definition.EntryUnknownField, "URL"},
		{"case-mismatched Headers", `{"url":"u","Headers":{}}`, definition.EntryUnknownField, "Headers"},
		{"case-mismatched Env", `{"command":"a","ENV":{}}`, definition.EntryUnknownField, "ENV"},
		{"case-mismatched requiresTrustedWorkspace", `{"command":"a","RequiresTrustedWorkspace":true}`, definition.EntryUnknownField, "RequiresTrustedWorkspace"},
		{"unknown key with control chars quoted", `{"command":"a","sh\nell":1}`, definition.EntryUnknownField, `"sh\nell"`},
		{"unknown key empty", `{"command":"a","":1}`, definition.EntryUnknownField, `""`},
		{"unknown key long cut", `{"command":"a","` + strings.Repeat("k", 70) + ` ":1}`, definition.EntryUnknownField,
			`"` + strings.Repeat("k", 64) + `"...`},
		{"unknown oauth key", `{"url":"u","oauth":{"clientID":"a"}}`, definition.EntryUnknownField, "oauth.clientID"},
		{"unknown oauth key quoted", `{"url":"u","oauth":{"a b":"a"}}`, definition.EntryUnknownField, `oauth."a b"`},
		{"first problem in document order", `{"command":"a","zzz":1,"args":1}`, definition.EntryUnknownField, "zzz"},
		{"first problem in document order, other way", `{"command":"a","args":1,"zzz":1}`, definition.EntryInvalidField, "args"},
		// field_not_for_transport
		{"url on inferred stdio", `{"command":"a","url":"u"}`, definition.EntryFieldNotForTransport, "url"},
		{"command on http", `{"type":"http","url":"u","command":"a"}`, definition.EntryFieldNotForTransport, "command"},
		{"env on http", `{"url":"u","env":{}}`, definition.EntryFieldNotForTransport, "env"},
		{"args on sse", `{"type":"sse","url":"u","args":[]}`, definition.EntryFieldNotForTransport, "args"},
		{"cwd on ws", `{"type":"ws","url":"u","cwd":"/"}`, definition.EntryFieldNotForTransport, "cwd"},
		{"headers on stdio", `{"command":"a","headers":{}}`, definition.EntryFieldNotForTransport, "headers"},
		{"headersHelper on stdio", `{"command":"a","headersHelper":["h"]}`, definition.EntryFieldNotForTransport, "headersHelper"},
		{"oauth on stdio", `{"type":"stdio","command":"a","oauth":{}}`, definition.EntryFieldNotForTransport, "oauth"},
		// missing required
		{"stdio without command", `{"type":"stdio","args":["a"]}`, definition.EntryMissingCommand, "command"},
		{"http without url", `{"type":"http","headers":{}}`, definition.EntryMissingURL, "url"},
		{"sse without url", `{"type":"sse"}`, definition.EntryMissingURL, "url"},
		{"ws without url", `{"type":"ws"}`, definition.EntryMissingURL, "url"},
		// invalid_field, stdio
		{"command empty", `{"command":""}`, definition.EntryInvalidField, "command"},
		{"command number", `{"command":1}`, definition.EntryInvalidField, "command"},
		{"command null", `{"command":null}`, definition.EntryInvalidField, "command"},
		{"command array", `{"command":["npx","x"]}`, definition.EntryInvalidField, "command"},
		{"command NUL", `{"command":"a\u0000b"}`, definition.EntryInvalidField, "command"},
		{"args string", `{"command":"a","args":"-v"}`, definition.EntryInvalidField, "args"},
		{"args number element", `{"command":"a","args":["a",1]}`, definition.EntryInvalidField, "args"},
		{"args null element", `{"command":"a","args":[null]}`, definition.EntryInvalidField, "args"},
		{"args null", `{"command":"a","args":null}`, definition.EntryInvalidField, "args"},
		{"args NUL", `{"command":"a","args":["\u0000"]}`, definition.EntryInvalidField, "args"},
		{"env array", `{"command":"a","env":["K=1"]}`, definition.EntryInvalidField, "env"},
		{"env number value", `{"command":"a","env":{"K":1}}`, definition.EntryInvalidField, "env"},
		{"env null value", `{"command":"a","env":{"K":null}}`, definition.EntryInvalidField, "env"},
		{"env object value", `{"command":"a","env":{"K":{"v":"1"}}}`, definition.EntryInvalidField, "env"},
		{"env empty key", `{"command":"a","env":{"":"1"}}`, definition.EntryInvalidField, "env"},
		{"env key with equals", `{"command":"a","env":{"A=B":"1"}}`, definition.EntryInvalidField, "env"},
		{"env value NUL", `{"command":"a","env":{"K":"\u0000"}}`, definition.EntryInvalidField, "env"},
		{"cwd number", `{"command":"a","cwd":1}`, definition.EntryInvalidField, "cwd"},
		{"cwd NUL", `{"command":"a","cwd":"/a\u0000"}`, definition.EntryInvalidField, "cwd"},
		// invalid_field, http
		{"url empty", `{"url":""}`, definition.EntryInvalidField, "url"},
		{"url number", `{"url":1}`, definition.EntryInvalidField, "url"},
		{"url object", `{"url":{"href":"u"}}`, definition.EntryInvalidField, "url"},
		{"headers string", `{"url":"u","headers":"Authorization: x"}`, definition.EntryInvalidField, "headers"},
		{"headers array", `{"url":"u","headers":[]}`, definition.EntryInvalidField, "headers"},
		{"header value number", `{"url":"u","headers":{"X-A":1}}`, definition.EntryInvalidField, "headers"},
		{"header name with space", `{"url":"u","headers":{"X A":"1"}}`, definition.EntryInvalidField, "headers"},
		{"header name empty", `{"url":"u","headers":{"":"1"}}`, definition.EntryInvalidField, "headers"},
		{"header name with colon", `{"url":"u","headers":{"X:A":"1"}}`, definition.EntryInvalidField, "headers"},
		{"header value CRLF", `{"url":"u","headers":{"X-A":"1\r\nHost: evil"}}`, definition.EntryInvalidField, "headers"},
		{"header value LF", `{"url":"u","headers":{"X-A":"1\n"}}`, definition.EntryInvalidField, "headers"},
		{"headersHelper number", `{"url":"u","headersHelper":1}`, definition.EntryInvalidField, "headersHelper"},
		{"headersHelper empty array", `{"url":"u","headersHelper":[]}`, definition.EntryInvalidField, "headersHelper"},
		{"headersHelper empty element", `{"url":"u","headersHelper":["h",""]}`, definition.EntryInvalidField, "headersHelper"},
		{"headersHelper number element", `{"url":"u","headersHelper":["h",1]}`, definition.EntryInvalidField, "headersHelper"},
		{"headersHelper object", `{"url":"u","headersHelper":{"cmd":"h"}}`, definition.EntryInvalidField, "headersHelper"},
		{"headersHelper null", `{"url":"u","headersHelper":null}`, definition.EntryInvalidField, "headersHelper"},
		{"oauth string", `{"url":"u","oauth":"yes"}`, definition.EntryInvalidField, "oauth"},
		{"oauth null", `{"url":"u","oauth":null}`, definition.EntryInvalidField, "oauth"},
		{"oauth clientId number", `{"url":"u","oauth":{"clientId":1}}`, definition.EntryInvalidField, "oauth.clientId"},
		{"oauth scopes string", `{"url":"u","oauth":{"scopes":"a b"}}`, definition.EntryInvalidField, "oauth.scopes"},
		{"oauth scopes number element", `{"url":"u","oauth":{"scopes":[1]}}`, definition.EntryInvalidField, "oauth.scopes"},
		{"oauth callbackPort zero", `{"url":"u","oauth":{"callbackPort":0}}`, definition.EntryInvalidField, "oauth.callbackPort"},
		{"oauth callbackPort too big", `{"url":"u","oauth":{"callbackPort":65536}}`, definition.EntryInvalidField, "oauth.callbackPort"},
		{"oauth callbackPort negative", `{"url":"u","oauth":{"callbackPort":-1}}`, definition.EntryInvalidField, "oauth.callbackPort"},
		{"oauth callbackPort fraction", `{"url":"u","oauth":{"callbackPort":80.5}}`, definition.EntryInvalidField, "oauth.callbackPort"},
		{"oauth callbackPort float literal", `{"url":"u","oauth":{"callbackPort":8080.0}}`, definition.EntryInvalidField, "oauth.callbackPort"},
		{"oauth callbackPort exponent", `{"url":"u","oauth":{"callbackPort":8e3}}`, definition.EntryInvalidField, "oauth.callbackPort"},
		{"oauth callbackPort string", `{"url":"u","oauth":{"callbackPort":"8080"}}`, definition.EntryInvalidField, "oauth.callbackPort"},
		{"oauth callbackPort huge", `{"url":"u","oauth":{"callbackPort":99999999999999999999999}}`, definition.EntryInvalidField, "oauth.callbackPort"},
		{"oauth metadata url number", `{"url":"u","oauth":{"authServerMetadataUrl":1}}`, definition.EntryInvalidField, "oauth.authServerMetadataUrl"},
		{"oauth client metadata url number", `{"url":"u","oauth":{"clientMetadataUrl":1}}`, definition.EntryInvalidField, "oauth.clientMetadataUrl"},
		{"malformed oauth with client secret is malformed", `{"url":"u","oauth":{"clientSecret":"s","scopes":1}}`, definition.EntryInvalidField, "oauth.scopes"},
		// both transports
		{"requiresTrustedWorkspace string", `{"command":"a","requiresTrustedWorkspace":"true"}`, definition.EntryInvalidField, "requiresTrustedWorkspace"},
		{"requiresTrustedWorkspace null", `{"url":"u","requiresTrustedWorkspace":null}`, definition.EntryInvalidField, "requiresTrustedWorkspace"},
		{"requiresTrustedWorkspace number", `{"url":"u","requiresTrustedWorkspace":1}`, definition.EntryInvalidField, "requiresTrustedWorkspace"},
		{"timeout string", `{"command":"a","timeout":"30000"}`, definition.EntryInvalidField, "timeout"},
		{"timeout null", `{"command":"a","timeout":null}`, definition.EntryInvalidField, "timeout"},
		{"timeout zero", `{"command":"a","timeout":0}`, definition.EntryInvalidField, "timeout"},
		{"timeout negative", `{"url":"u","timeout":-1}`, definition.EntryInvalidField, "timeout"},
		{"timeout fraction", `{"url":"u","timeout":1.5}`, definition.EntryInvalidField, "timeout"},
		{"timeout exponent", `{"url":"u","timeout":1e3}`, definition.EntryInvalidField, "timeout"},
		{"timeout over a day", `{"url":"u","timeout":86400001}`, definition.EntryInvalidField, "timeout"},
		{"case-mismatched timeout", `{"command":"a","Timeout":5}`, definition.EntryUnknownField, "Timeout"},
		// sse and ws are validated as http
		{"sse with unknown field", `{"type":"sse","url":"u","shell":1}`, definition.EntryUnknownField, "shell"},
		{"ws with bad headers", `{"type":"ws","url":"u","headers":1}`, definition.EntryInvalidField, "headers"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := decodeTestOne(t, tt.entry)
			assert.Nil(t, e.Def)
			assert.Equal(t, tt.problem, e.Problem)
			assert.Equal(t, tt.field, e.Field)
		})
	}
}

func TestDecodeNames(t *testing.T) {
	long := strings.Repeat("n", 64)
	tests := []struct {
		name     string
		servers  string
		wantName string
		problem  string
	}{
		{"valid charset", `{"a.B-c_9":{"command":"x"}}`, "a.B-c_9", ""},
		{"64 bytes", `{"` + long + `":{"command":"x"}}`, long, ""},
		{"65 bytes", `{"` + long + `n":{"command":"x"}}`, `"` + long + `n"`, definition.EntryInvalidName},
		{"empty", `{"":{"command":"x"}}`, `""`, definition.EntryInvalidName},
		{"space", `{"a b":{"command":"x"}}`, `"a b"`, definition.EntryInvalidName},
		{"slash", `{"a/b":{"command":"x"}}`, `"a/b"`, definition.EntryInvalidName},
		{"colon", `{"a:b":{"command":"x"}}`, `"a:b"`, definition.EntryInvalidName},
		{"non-ascii quoted to ascii", `{"ü":{"command":"x"}}`, `"\u00fc"`, definition.EntryInvalidName},
		{"control chars quoted", `{"a\u001b[2Jb\n":{"command":"x"}}`, `"a\x1b[2Jb\n"`, definition.EntryInvalidName},
		{"quote char cannot forge a valid name", `{"\"a\"":{"command":"x"}}`, `"\"a\""`, definition.EntryInvalidName},
		{"invalid name even when entry is malformed", `{"a b":1}`, `"a b"`, definition.EntryInvalidName},
		{"duplicate name collapses", `{"a":{"command":"x"},"a":{"url":"u"}}`, "a", definition.EntryDuplicateName},
		{"duplicate name wins over malformed", `{"a":1,"a":{"url":"u"}}`, "a", definition.EntryDuplicateName},
		{"duplicate invalid name", `{"a b":1,"a b":2}`, `"a b"`, definition.EntryDuplicateName},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := definition.Decode(decodeTestSource(`{"mcpServers":` + tt.servers + `}`))
			require.Nil(t, doc.Problem)
			require.Len(t, doc.Entries, 1)
			e := doc.Entries[0]
			assert.Equal(t, tt.wantName, e.Name)
			assert.Equal(t, tt.problem, e.Problem)
			assert.Empty(t, e.Field)
			if tt.problem == "" {
				require.NotNil(t, e.Def)
				assert.Equal(t, tt.wantName, e.Def.Name)
			} else {
				assert.Nil(t, e.Def)
			}
		})
	}
}

func TestDecodeDuplicateNameKeepsOthers(t *testing.T) {
	doc := definition.Decode(decodeTestSource(`{"mcpServers":{"b":{"command":"x"},"a":{"url":"u"},"b":{"command":"y"},"c":{"command":"z"}}}`))
	require.Nil(t, doc.Problem)
	require.Len(t, doc.Entries, 3)
	assert.Equal(t, "a", doc.Entries[0].Name)
	assert.NotNil(t, doc.Entries[0].Def)
	assert.Equal(t, definition.Entry{Name: "b", Problem: definition.EntryDuplicateName}, doc.Entries[1])
	assert.Equal(t, "c", doc.Entries[2].Name)
	assert.NotNil(t, doc.Entries[2].Def)
}

func TestDecodeDefinitions(t *testing.T) {
	const origin = "/home/u/.mcp.json"
	tests := []struct {
		name  string
		entry string
		want  definition.Definition // Name, Tier and Origin filled in by the test
	}{
		{
			name:  "full stdio",
			entry: `{"type":"stdio","command":"npx","args":["-y","@scope/server","--flag"],"env":{"TOKEN":"${GITHUB_TOKEN}","DEBUG":"1"},"cwd":"./srv","requiresTrustedWorkspace":true}`,
			want: definition.Definition{Kind: definition.KindStdio, Command: "npx", Args: []string{"-y", "@scope/server", "--flag"},
				Env: map[string]string{"TOKEN": "${GITHUB_TOKEN}", "DEBUG": "1"}, Cwd: "./srv", RequiresTrustedWorkspace: true},
		},
		{
			name:  "timeout on stdio, in milliseconds",
			entry: `{"command":"server","timeout":30000}`,
			want:  definition.Definition{Kind: definition.KindStdio, Command: "server", Timeout: 30 * time.Second},
		},
		{
			name:  "timeout on http, the largest",
			entry: `{"url":"https://x.example/mcp","timeout":86400000}`,
			want:  definition.Definition{Kind: definition.KindHTTP, URL: "https://x.example/mcp", Timeout: 24 * time.Hour},
		},
		{
			name:  "inferred stdio, minimal",
			entry: `{"command":"server"}`,
			want:  definition.Definition{Kind: definition.KindStdio, Command: "server"},
		},
		{
			name:  "empty args, env and cwd",
			entry: `{"command":"server","args":[],"env":{},"cwd":""}`,
			want:  definition.Definition{Kind: definition.KindStdio, Command: "server", Args: []string{}, Env: map[string]string{}},
		},
		{
			name:  "escaped keys are exact after unescaping",
			entry: `{"\u0063ommand":"server"}`,
			want:  definition.Definition{Kind: definition.KindStdio, Command: "server"},
		},
		{
			name: "full http",
			entry: `{"type":"http","url":"https://mcp.example.com/mcp","headers":{"Authorization":"Bearer ${TOKEN}","X-Trace":"on"},` +
				`"headersHelper":["/usr/bin/helper","--server","x"],` +
				`"oauth":{"clientId":"cid","scopes":["read","write"],"callbackPort":8765,"authServerMetadataUrl":"https://auth.example.com/.well-known/oauth-authorization-server",` +
				`"clientMetadataUrl":"https://app.example/client.json"},` +
				`"requiresTrustedWorkspace":false}`,
			want: definition.Definition{Kind: definition.KindHTTP, URL: "https://mcp.example.com/mcp",
				Headers:       map[string]string{"Authorization": "Bearer ${TOKEN}", "X-Trace": "on"},
				HeadersHelper: []string{"/usr/bin/helper", "--server", "x"},
				OAuth: &definition.OAuth{ClientID: "cid", Scopes: []string{"read", "write"}, CallbackPort: 8765,
					MetadataURL: "https://auth.example.com/.well-known/oauth-authorization-server", ClientMetadataURL: "https://app.example/client.json"}},
		},
		{
			name:  "inferred http",
			entry: `{"url":"https://x.example/mcp"}`,
			want:  definition.Definition{Kind: definition.KindHTTP, URL: "https://x.example/mcp"},
		},
		{
			name:  "empty oauth object",
			entry: `{"type":"http","url":"u","oauth":{}}`,
			want:  definition.Definition{Kind: definition.KindHTTP, URL: "u", OAuth: &definition.OAuth{}},
		},
		{
			name:  "callbackPort bounds",
			entry: `{"url":"u","oauth":{"callbackPort":65535}}`,
			want:  definition.Definition{Kind: definition.KindHTTP, URL: "u", OAuth: &definition.OAuth{CallbackPort: 65535}},
		},
		{
			name:  "callbackPort one",
			entry: `{"url":"u","oauth":{"callbackPort":1}}`,
			want:  definition.Definition{Kind: definition.KindHTTP, URL: "u", OAuth: &definition.OAuth{CallbackPort: 1}},
		},
		{
			name:  "sse refused by name",
			entry: `{"type":"sse","url":"https://old.example/sse","headers":{"X":"1"}}`,
			want: definition.Definition{Kind: definition.KindSSE, URL: "https://old.example/sse", Headers: map[string]string{"X": "1"},
				Refusal: definition.RefusalTransportSSE},
		},
		{
			name:  "ws refused by name",
			entry: `{"type":"ws","url":"wss://x.example/ws"}`,
			want:  definition.Definition{Kind: definition.KindWS, URL: "wss://x.example/ws", Refusal: definition.RefusalTransportWS},
		},
		{
			name:  "headersHelper string refused and not kept",
			entry: `{"url":"u","headersHelper":"get-token.sh | jq -r .token"}`,
			want:  definition.Definition{Kind: definition.KindHTTP, URL: "u", Refusal: definition.RefusalHeadersHelperNotArgv},
		},
		{
			name:  "headersHelper empty string still refused by name",
			entry: `{"url":"u","headersHelper":""}`,
			want:  definition.Definition{Kind: definition.KindHTTP, URL: "u", Refusal: definition.RefusalHeadersHelperNotArgv},
		},
		{
			name:  "client secret refused and not kept",
			entry: `{"url":"u","oauth":{"clientId":"cid","clientSecret":"s3cr3t-value"}}`,
			want: definition.Definition{Kind: definition.KindHTTP, URL: "u", OAuth: &definition.OAuth{ClientID: "cid"},
				Refusal: definition.RefusalOAuthClientSecret},
		},
		{
			name:  "client secret of any shape refused",
			entry: `{"url":"u","oauth":{"clientSecret":{"env":"X"}}}`,
			want:  definition.Definition{Kind: definition.KindHTTP, URL: "u", OAuth: &definition.OAuth{}, Refusal: definition.RefusalOAuthClientSecret},
		},
		{
			name:  "client secret outranks shell helper",
			entry: `{"url":"u","headersHelper":"sh","oauth":{"clientSecret":"s"}}`,
			want:  definition.Definition{Kind: definition.KindHTTP, URL: "u", OAuth: &definition.OAuth{}, Refusal: definition.RefusalOAuthClientSecret},
		},
		{
			name:  "transport refusal outranks client secret",
			entry: `{"type":"sse","url":"u","oauth":{"clientSecret":"s"}}`,
			want:  definition.Definition{Kind: definition.KindSSE, URL: "u", OAuth: &definition.OAuth{}, Refusal: definition.RefusalTransportSSE},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := decodeTestOne(t, tt.entry)
			require.Empty(t, e.Problem)
			require.Empty(t, e.Field)
			require.NotNil(t, e.Def)
			want := tt.want
			want.Name, want.Tier, want.Origin = "s", ports.TierUser, origin
			assert.Equal(t, want, *e.Def)
			rendered := fmt.Sprintf("%#v %#v", e, e.Def.OAuth)
			assert.NotContains(t, rendered, "s3cr3t", "a client secret value must not be kept")
			assert.NotContains(t, rendered, "get-token.sh", "a shell helper line must not be kept")
		})
	}
}

func TestDecodeSortedAndDeterministic(t *testing.T) {
	a := `{"mcpServers":{"zeta":{"command":"z"},"alpha":{"url":"u"},"Mid":{"command":"m"},"b b":1,"beta":{}},"disabledMcpServers":["zeta","alpha","zeta"]}`
	b := `{"disabledMcpServers":["alpha","zeta"],"mcpServers":{"beta":{},"b b":1,"Mid":{"command":"m"},"alpha":{"url":"u"},"zeta":{"command":"z"}}}`
	da := definition.Decode(decodeTestSource(a))
	db := definition.Decode(decodeTestSource(b))
	assert.Equal(t, da, db, "member order must not matter")
	assert.Equal(t, da, definition.Decode(decodeTestSource(a)))
	var names []string
	for _, e := range da.Entries {
		names = append(names, e.Name)
	}
	assert.Equal(t, []string{`"b b"`, "Mid", "alpha", "beta", "zeta"}, names)
	assert.True(t, sort.StringsAreSorted(names))
	assert.Equal(t, []string{"alpha", "zeta"}, da.Disabled)
}

// TestDecodeNoValueLeak plants a canary inside every field value, in every
// JSON shape, and checks that no problem word, field name, entry name or
// refusal ever carries it.
func TestDecodeNoValueLeak(t *testing.T) {
	const canary = "CANARY7f3a"
	shapes := map[string]string{
		"string":        `"` + canary + `"`,
		"string-nul":    `"` + canary + `\u0000"`,
		"string-crlf":   `"` + canary + `\r\n"`,
		"empty-ish":     `" ` + canary + ` "`,
		"array":         `["` + canary + `"]`,
		"array-mixed":   `["` + canary + `",1,null]`,
		"object":        `{"k":"` + canary + `"}`,
		"object-nested": `{"k":{"k":["` + canary + `"]}}`,
		"object-dup":    `{"k":"` + canary + `","k":"` + canary + `"}`,
	}
	templates := map[string]string{
		"type":                  `{"type":%s,"command":"c"}`,
		"command":               `{"command":%s}`,
		"args":                  `{"command":"c","args":%s}`,
		"args-element":          `{"command":"c","args":[%s]}`,
		"env":                   `{"command":"c","env":%s}`,
		"env-value":             `{"command":"c","env":{"K":%s}}`,
		"cwd":                   `{"command":"c","cwd":%s}`,
		"url":                   `{"url":%s}`,
		"url-on-stdio":          `{"command":"c","url":%s}`,
		"command-on-http":       `{"type":"http","url":"u","command":%s}`,
		"headers":               `{"url":"u","headers":%s}`,
		"header-value":          `{"url":"u","headers":{"X-K":%s}}`,
		"headersHelper":         `{"url":"u","headersHelper":%s}`,
		"headersHelper-element": `{"url":"u","headersHelper":["h",%s]}`,
		"oauth":                 `{"url":"u","oauth":%s}`,
		"clientId":              `{"url":"u","oauth":{"clientId":%s}}`,
		"clientSecret":          `{"url":"u","oauth":{"clientSecret":%s}}`,
		"scopes":                `{"url":"u","oauth":{"scopes":%s}}`,
		"callbackPort":          `{"url":"u","oauth":{"callbackPort":%s}}`,
		"metadataUrl":           `{"url":"u","oauth":{"authServerMetadataUrl":%s}}`,
		"requiresTrusted":       `{"url":"u","requiresTrustedWorkspace":%s}`,
		"unknown-field":         `{"command":"c","shell":%s}`,
		"duplicate-field":       `{"command":%s,"command":%s}`,
		"sse-url":               `{"type":"sse","url":%s}`,
		"entry":                 `%s`,
	}
	roots := map[string]string{
		"servers": `{"mcpServers":%s}`,
		"overlay": `{"disabledMcpServers":{"k":%s}}`,
		"root":    `%s`,
		"other":   `{"other":%s,"mcpServers":{}}`,
	}
	check := func(t *testing.T, doc definition.Document) {
		t.Helper()
		if doc.Problem != nil {
			assert.NotContains(t, string(doc.Problem.Kind), canary)
		}
		for _, e := range doc.Entries {
			assert.NotContains(t, e.Name, canary)
			assert.NotContains(t, e.Problem, canary)
			assert.NotContains(t, e.Field, canary)
			if e.Def != nil {
				assert.NotContains(t, e.Def.Refusal, canary)
			}
		}
		res := definition.Resolve([]definition.Document{doc})
		for _, s := range res.Servers {
			assert.NotContains(t, s.Reason, canary)
			assert.NotContains(t, s.Field, canary)
		}
	}
	for tname, tmpl := range templates {
		for sname, shape := range shapes {
			t.Run(tname+"/"+sname, func(t *testing.T) {
				entry := strings.ReplaceAll(tmpl, "%s", shape)
				doc := definition.Decode(decodeTestSource(`{"mcpServers":{"s":` + entry + `}}`))
				require.Nil(t, doc.Problem)
				require.Len(t, doc.Entries, 1)
				check(t, doc)
			})
		}
	}
	for rname, tmpl := range roots {
		for sname, shape := range shapes {
			t.Run("root-"+rname+"/"+sname, func(t *testing.T) {
				check(t, definition.Decode(decodeTestSource(strings.ReplaceAll(tmpl, "%s", shape))))
			})
		}
	}
}

func TestDecodeGolden(t *testing.T) {
	for _, name := range []string{"decode_realistic", "decode_malformed"} {
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", name+".json"))
			require.NoError(t, err)
			doc := definition.Decode(definition.Source{Tier: ports.TierProject, Origin: "repo/.mcp.json", Data: data})
			got := decodeTestRender(doc)
			assert.NotContains(t, got, "hunter2", "a client secret must not be kept")
			assert.NotContains(t, got, "curl", "a shell helper line must not be kept")
			resolveTestGolden(t, filepath.Join("testdata", name+".golden"), got)
		})
	}
}

// decodeTestRender renders a Document, values included, one line per fact,
// in a stable order.
func decodeTestRender(doc definition.Document) string {
	var b strings.Builder
	fmt.Fprintf(&b, "document tier=%s origin=%q\n", doc.Tier, doc.Origin)
	if doc.Problem != nil {
		fmt.Fprintf(&b, "problem %s\n", doc.Problem.Kind)
	}
	for _, e := range doc.Entries {
		if e.Def == nil {
			fmt.Fprintf(&b, "entry %s malformed problem=%s field=%q\n", e.Name, e.Problem, e.Field)
			continue
		}
		d := e.Def
		fmt.Fprintf(&b, "entry %s kind=%s refusal=%q trusted=%t\n", e.Name, d.Kind, d.Refusal, d.RequiresTrustedWorkspace)
		if d.Command != "" || d.Args != nil || d.Cwd != "" {
			fmt.Fprintf(&b, "  command=%q args=%q cwd=%q\n", d.Command, d.Args, d.Cwd)
		}
		for _, k := range decodeTestKeys(d.Env) {
			fmt.Fprintf(&b, "  env %s=%q\n", k, d.Env[k])
		}
		if d.URL != "" {
			fmt.Fprintf(&b, "  url=%q\n", d.URL)
		}
		for _, k := range decodeTestKeys(d.Headers) {
			fmt.Fprintf(&b, "  header %s=%q\n", k, d.Headers[k])
		}
		if d.HeadersHelper != nil {
			fmt.Fprintf(&b, "  headersHelper=%q\n", d.HeadersHelper)
		}
		if o := d.OAuth; o != nil {
			fmt.Fprintf(&b, "  oauth clientId=%q scopes=%q callbackPort=%d metadataUrl=%q\n", o.ClientID, o.Scopes, o.CallbackPort, o.MetadataURL)
		}
	}
	for _, n := range doc.Disabled {
		fmt.Fprintf(&b, "disabled %s\n", n)
	}
	return b.String()
}

func decodeTestKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
