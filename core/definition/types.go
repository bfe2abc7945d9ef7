// Package definition decides what an MCP server is: it decodes the
// de-facto "mcpServers" JSON documents hosts already use, resolves
// precedence across tiers and disable overlays, materializes ${VAR}
// templates with a record of which stretches are secret, fingerprints the
// result and projects it for display with secrets masked.
//
// Everything here is pure: nothing connects, spawns, or reads the process
// environment or the file system. A host hands in bytes tagged with their
// tier and origin (Source) and a variable lookup (Lookup).
//
// The flow is Decode → Resolve → Materialize → Fingerprint / Project.
package definition

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/mcpward/mcpward/ports"
)

// Source is one configuration source as the host read it.
type Source struct {
	// Tier is the source's precedence tier.
	Tier ports.Tier
	// Origin is the host's label for the source (a file path, a plugin id).
	// It is printed in projections and results, so it must not hold a secret.
	Origin string
	// Data is the document's bytes.
	Data []byte
	// ReadErr is non-nil when the host could not read the source at all.
	// Its text is never printed or kept; only its presence matters.
	ReadErr error
}

// ProblemKind classifies a problem with a whole source.
type ProblemKind string

// The source problems. Each is distinct, so a host can tell an unreadable
// file from a document that is not JSON from one whose shape is wrong.
const (
	// ProblemUnreadable: the host could not read the source.
	ProblemUnreadable ProblemKind = "unreadable"
	// ProblemMalformedDocument: the bytes are not one JSON value.
	ProblemMalformedDocument ProblemKind = "malformed_document"
	// ProblemMalformedRoot: the JSON value is not an object.
	ProblemMalformedRoot ProblemKind = "malformed_root"
	// ProblemMalformedServers: "mcpServers" is present but not an object.
	ProblemMalformedServers ProblemKind = "malformed_servers"
	// ProblemMalformedOverlay: "disabledMcpServers" is present but not an
	// array of strings. The rest of the document is still used.
	ProblemMalformedOverlay ProblemKind = "malformed_overlay"
	// ProblemMalformedPolicy: a managed source's policy keys
	// ("allowedMcpServers", "deniedMcpServers", "deniedTools") are present
	// but not of their documented shape. The document's entries are still
	// used, but, as for any problem of a managed source, every name won
	// below managed is blocked (see Resolve).
	ProblemMalformedPolicy ProblemKind = "malformed_policy"
)

// ServerMatcher is one entry of a managed allow or deny list, in Claude
// Code's managed-settings shape: exactly one of Name, Command and URL is
// set (and Env only beside Command).
type ServerMatcher struct {
	// Name matches the server id exactly ("serverName").
	Name string `json:"serverName,omitempty"`
	// Command matches a stdio server whose command followed by its args,
	// as it runs (expanded), equals this argv exactly ("serverCommand");
	// see ServerMatcher.MatchesMaterialized for how Env narrows it and
	// which fields an allow entry ignores.
	Command []string `json:"serverCommand,omitempty"`
	// Env ("serverEnv", only beside "serverCommand") names environment
	// variables the server's env must set to exactly these values. In an
	// allow entry it is also the only way to allow a definition that sets
	// a variable changing which code runs (CodeLoadingEnv).
	Env map[string]string `json:"serverEnv,omitempty"`
	// URL is a pattern matched against an http server's URL as written
	// ("serverUrl"): "*" matches any run of bytes, except that in the
	// scheme and authority (up to the first "/" after "://") it never
	// matches "/", "?", "#" or "@", so "https://*.example.com/*" cannot
	// match a URL of another host.
	URL string `json:"serverUrl,omitempty"`
}

// Policy is a managed source's MCP policy. It is read only from a managed
// source; the same keys in any other tier are ignored, so no lower tier
// can widen it.
type Policy struct {
	// Allowed is the allow list ("allowedMcpServers"): when non-nil, a
	// server matching none of its entries is refused
	// (ReasonPolicyNotAllowed); an empty non-nil list refuses every
	// server. nil means no allow list.
	Allowed []ServerMatcher
	// Denied is the deny list ("deniedMcpServers"): a server matching one
	// of its entries is refused (ReasonPolicyDenied). It wins over
	// Allowed.
	Denied []ServerMatcher
	// DeniedTools are tool patterns ("deniedTools"): "SERVER/TOOL" or a
	// host-facing name, "*" a wildcard. A matching tool never reaches the
	// host (the catalog rejects it as "policy_denied").
	DeniedTools []string
}

// SourceProblem is a problem with a whole source. It names the source and
// the kind of problem, never content of the source.
type SourceProblem struct {
	Tier   ports.Tier
	Origin string
	Kind   ProblemKind
}

// Kind is the transport a definition declares.
type Kind string

// The recognised transports. Only KindStdio and KindHTTP can ever connect;
// KindSSE and KindWS are recognised so they can be refused by name.
const (
	KindStdio Kind = "stdio"
	KindHTTP  Kind = "http"
	KindSSE   Kind = "sse"
	KindWS    Kind = "ws"
)

// OAuth is a definition's OAuth client configuration. A client secret never
// lives in a definition: one present there makes the definition refused by
// name, and its value is not kept.
type OAuth struct {
	ClientID     string
	Scopes       []string
	CallbackPort int
	// MetadataURL is the authorization server metadata URL override, "" if
	// absent.
	MetadataURL string
	// ClientMetadataURL is the URL of the client's metadata document (its
	// client_id where the authorization server supports such documents),
	// "" if absent.
	ClientMetadataURL string
}

// Definition is one decoded, well-formed server entry. Its string values are
// still templates (see Materialize) and may hold secrets: a Definition is
// never printed; print a Projection instead.
type Definition struct {
	// Name is the server id (its key under mcpServers).
	Name string
	// Tier and Origin are the provenance of the source it was decoded from.
	Tier   ports.Tier
	Origin string
	// Kind is the declared transport.
	Kind Kind

	// Stdio fields.
	Command string
	Args    []string
	Env     map[string]string
	Cwd     string

	// HTTP fields.
	URL     string
	Headers map[string]string
	// HeadersHelper is the exact argv of a header helper, or nil.
	HeadersHelper []string
	// OAuth is the OAuth client configuration, or nil.
	OAuth *OAuth

	// RequiresTrustedWorkspace makes activation deny unless the host says
	// the workspace is trusted.
	RequiresTrustedWorkspace bool

	// Timeout is the entry's "timeout": how long one request to the server
	// may take, 0 when absent (the host's default applies). A host uses
	// it only to shorten its own call timeout, never to lengthen it
	// (composition does so for every call through it). It is not part
	// of the fingerprint: it changes neither what runs nor where it
	// connects, so changing it asks for no new approval.
	Timeout time.Duration

	// IncludeTools, when non-nil, is the only set of the server's tools
	// (by the server's own names) the host may see; an empty non-nil list
	// admits none. ExcludeTools names tools the host never sees, and wins
	// over IncludeTools. Both are kept as written (not templates), sorted
	// and without duplicates; nil means absent.
	IncludeTools []string
	ExcludeTools []string

	// Refusal is a stable reason word when the entry is recognised but
	// refused by name (a deprecated transport, a header helper given as a
	// shell string, a client secret); "" when the entry may be used. A
	// refused definition still wins precedence and stays listed.
	Refusal string
}

// Entry is one server entry of a document: a Definition, or a malformed
// entry that still shadows its name.
type Entry struct {
	// Name is the server id.
	Name string
	// Def is the decoded definition, nil when the entry is malformed.
	Def *Definition
	// Problem is a stable reason word when the entry is malformed
	// (for example "invalid_type", "missing_command"), "" otherwise.
	Problem string
	// Field names the offending field of a malformed entry ("" if none
	// applies). It is a field name from the schema, never a value.
	Field string
}

// Document is one decoded source.
type Document struct {
	Tier   ports.Tier
	Origin string
	// Problem is non-nil when the source is unusable as a whole
	// (unreadable, not JSON, wrong root or mcpServers shape) or, with Kind
	// ProblemMalformedOverlay, when only its overlay is unusable.
	Problem *SourceProblem
	// Entries are the server entries, sorted by name.
	Entries []Entry
	// Disabled is the document's disable overlay ("disabledMcpServers"),
	// sorted and without duplicates.
	Disabled []string
	// Policy is the managed source's MCP policy, nil when the source is
	// not managed, holds no policy key, or its policy is malformed.
	Policy *Policy
}

// Format prints d as its redacted ProjectDefinition, never its raw values,
// whatever the verb, so logging a Definition by accident cannot leak a
// secret.
func (d Definition) Format(f fmt.State, verb rune) {
	fmt.Fprintf(f, "%+v", ProjectDefinition(&d))
}

// MarshalJSON encodes d as its redacted ProjectDefinition, for the same
// reason: a Definition has no JSON form that carries its raw values.
func (d Definition) MarshalJSON() ([]byte, error) {
	return json.Marshal(ProjectDefinition(&d))
}
