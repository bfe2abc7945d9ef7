// Package hostconfig decodes the MCP server configuration files of other
// hosts (Claude Code, Claude Desktop, Cursor, VS Code, Codex, Gemini CLI)
// into mcpward's own "mcpServers" JSON, so a person can import the servers
// they already have instead of retyping them.
//
// It is pure: bytes in, our format's bytes and a list of findings out. It
// never reads a file, the environment or the clock, and never connects.
//
// Decoding is as strict as our own format's: a field the tool's documented
// format gives a meaning is mapped (variable syntaxes included), a field
// that would grant something (trust, autoApprove, alwaysAllow) is dropped
// and reported, never honoured, and a field outside the documented format,
// or one whose meaning mcpward cannot keep, refuses that server by name
// (the other servers are still imported). Every server in the output
// decodes through core/definition's strict decoder as a usable definition.
package hostconfig

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mcpward/mcpward/core/definition"
	"github.com/mcpward/mcpward/core/refusal"
)

// Format names another host's configuration format.
type Format string

// The formats Decode reads.
const (
	// ClaudeCode is ~/.claude.json: the top-level "mcpServers" (user scope)
	// or "projects"[workspace]."mcpServers" (local scope, Options.Local).
	// A project's .mcp.json is already mcpward's own format.
	ClaudeCode Format = "claude-code"
	// ClaudeDesktop is claude_desktop_config.json's "mcpServers".
	ClaudeDesktop Format = "claude-desktop"
	// Cursor is ~/.cursor/mcp.json or a project's .cursor/mcp.json.
	Cursor Format = "cursor"
	// VSCode is a workspace's .vscode/mcp.json ("servers", "inputs").
	VSCode Format = "vscode"
	// Codex is ~/.codex/config.toml's [mcp_servers.NAME] tables.
	Codex Format = "codex"
	// Gemini is Gemini CLI's settings.json "mcpServers".
	Gemini Format = "gemini"
)

// Formats returns every format Decode reads, in a fixed order.
func Formats() []Format {
	return []Format{ClaudeCode, ClaudeDesktop, Cursor, VSCode, Codex, Gemini}
}

// Options tune Decode. The zero value reads user-scope files with no
// workspace known.
type Options struct {
	// Workspace is the absolute path of the workspace root: what
	// ${workspaceFolder} (VS Code, Cursor) expands to, and for ClaudeCode
	// with Local the key of "projects". "" means unknown: a server using
	// ${workspaceFolder} is then refused (ReasonWorkspaceUnknown).
	Workspace string
	// Local selects, for ClaudeCode, projects[Workspace].mcpServers instead
	// of the top-level mcpServers. Other formats ignore it.
	Local bool
}

// FindingKind says what became of a server or one of its fields.
type FindingKind string

// The finding kinds.
const (
	// FindingDropped: the field was not imported; the server was.
	FindingDropped FindingKind = "dropped"
	// FindingRefused: the server was not imported at all.
	FindingRefused FindingKind = "refused"
	// FindingDisabled: the server was imported and listed in the disable
	// overlay ("disabledMcpServers"), because the source disabled it.
	FindingDisabled FindingKind = "disabled"
)

// The reason words of findings. Each is a stable lower_snake_case word.
const (
	// ReasonGrantNotHonoured: a field that would grant something (trust,
	// autoApprove, alwaysAllow) was dropped: the imported server still
	// needs approval like any other.
	ReasonGrantNotHonoured = "grant_not_honoured"
	// ReasonInformational: a field without effect on what runs (a
	// description, gallery metadata) was dropped.
	ReasonInformational = "informational"
	// ReasonTimeoutUnitUnknown: a "timeout" in a format that documents no
	// such field (copied from another host) was dropped: its unit is not
	// known.
	ReasonTimeoutUnitUnknown = "timeout_unit_unknown"
	// ReasonStartupTimeout: a connect/startup timeout was dropped: the
	// host's connect timeout applies to every server.
	ReasonStartupTimeout = "startup_timeout_not_per_server"
	// ReasonDevMode: VS Code's "dev" (watch and debug) was dropped.
	ReasonDevMode = "dev_mode_not_supported"
	// ReasonDisabled: the source disabled the server (FindingDisabled).
	ReasonDisabled = "disabled_in_source"

	// ReasonUnknownField: a field outside the tool's documented format.
	ReasonUnknownField = "unknown_field"
	// ReasonDuplicateField: a key occurs twice.
	ReasonDuplicateField = "duplicate_field"
	// ReasonDuplicateName: a server name occurs twice.
	ReasonDuplicateName = "duplicate_name"
	// ReasonInvalidName: the name is not a valid mcpward server name.
	ReasonInvalidName = "invalid_name"
	// ReasonInvalidField: a known field has the wrong type or value.
	ReasonInvalidField = "invalid_field"
	// ReasonNotObject: the server entry is not an object (table).
	ReasonNotObject = "entry_not_object"
	// ReasonMissingTransport: neither a command nor a URL.
	ReasonMissingTransport = "missing_transport"
	// ReasonAmbiguousTransport: both a command and a URL, or two URLs.
	ReasonAmbiguousTransport = "ambiguous_transport"
	// ReasonUnknownType: "type" names no transport the format knows.
	ReasonUnknownType = "unknown_type"
	// ReasonTransportSSE: the server uses the legacy HTTP+SSE transport,
	// which mcpward refuses.
	ReasonTransportSSE = "transport_sse_unsupported"
	// ReasonInputVariable: a VS Code ${input:…} variable (prompted by the
	// editor; mcpward has no prompt to fill it).
	ReasonInputVariable = "input_variable_unsupported"
	// ReasonUnsupportedVariable: a ${…} variable the format knows but
	// mcpward cannot map, or one the format does not know.
	ReasonUnsupportedVariable = "unsupported_variable"
	// ReasonLiteralTemplate: a value holds "${" in a format that expands
	// nothing; mcpward's format would read it as a template and has no
	// escape for it.
	ReasonLiteralTemplate = "literal_template"
	// ReasonWorkspaceUnknown: ${workspaceFolder} with no Options.Workspace.
	ReasonWorkspaceUnknown = "workspace_unknown"
	// ReasonEnvFile: "envFile" names a file to read variables from; an
	// import does no I/O and does not copy a file's secrets into a
	// configuration, so the server is refused.
	ReasonEnvFile = "env_file_unsupported"
	// ReasonOAuthUnsupported: an OAuth or provider-auth configuration
	// mcpward's format cannot express.
	ReasonOAuthUnsupported = "oauth_unsupported"
	// ReasonClientSecret: an OAuth client secret, which never lives in a
	// definition.
	ReasonClientSecret = "oauth_client_secret_in_definition"
	// ReasonSandbox: VS Code's sandbox settings; dropping them would widen
	// what the server may do.
	ReasonSandbox = "sandbox_unsupported"
)

// Finding is one thing Decode reports about a server. It holds names from
// the document (the server name, a field name) and fixed words, never a
// value.
type Finding struct {
	// Server is the server name as the document spells it, in the form
	// strconv.QuoteToASCII gives it when it is not a valid name.
	Server string      `json:"server"`
	Kind   FindingKind `json:"kind"`
	// Field is the name of the foreign format's field concerned ("trust",
	// "env", "auth.CLIENT_SECRET"; never a value, nor a key under env or
	// headers), "" if none applies.
	Field string `json:"field,omitempty"`
	// Reason is one of the Reason* words, or for a server the result
	// check refused, a core/definition problem or refusal word.
	Reason string `json:"reason"`
}

// Result is a decoded foreign file.
type Result struct {
	// JSON is mcpward's own format, {"mcpServers": {…}} and, when a server
	// was disabled in the source, "disabledMcpServers": […], with two-space
	// indentation, names sorted, ending in a newline. Every server in it
	// decodes through definition.Decode as a definition without a refusal.
	JSON []byte
	// Servers are the imported server names, sorted.
	Servers []string
	// Disabled are the imported names the source disabled, sorted.
	Disabled []string
	// Findings are sorted by server, then field.
	Findings []Finding
}

// Reasons of whole-document errors (a *MalformedError's Reason, and the
// refusal.Error it unwraps to, Class Config).
const (
	// ReasonMalformedDocument: not one well-formed JSON value (or TOML
	// document), or not valid UTF-8, or a repeated root key.
	ReasonMalformedDocument = "malformed_document"
	// ReasonMalformedRoot: the document is not an object.
	ReasonMalformedRoot = "malformed_root"
	// ReasonMalformedServers: the servers key is present but not an
	// object, or a path to it (projects, projects[workspace]) is not.
	ReasonMalformedServers = "malformed_servers"
	// ReasonUnknownFormat: Decode was given no known Format.
	ReasonUnknownFormat = "unknown_format"
)

// MalformedError is a document Decode cannot read at all. Line and Column
// (1-based, columns counted in characters) locate the problem when known,
// else they are 0. It unwraps to a *refusal.Error of Class Config with the
// same Reason. Its text holds no content of the document.
type MalformedError struct {
	Format Format
	Reason string
	// Field is the key concerned ("mcpServers", "projects"), "" if none.
	Field        string
	Line, Column int
}

func (e *MalformedError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s", e.Format, e.Reason)
	if e.Field != "" {
		fmt.Fprintf(&b, " (%s)", e.Field)
	}
	if e.Line > 0 {
		fmt.Fprintf(&b, " at line %d, column %d", e.Line, e.Column)
	}
	return b.String()
}

// Unwrap returns the refusal the error amounts to.
func (e *MalformedError) Unwrap() error {
	r := &refusal.Error{Class: refusal.Config, Reason: e.Reason}
	if e.Line > 0 {
		r.Detail = fmt.Sprintf("line %d, column %d", e.Line, e.Column)
	}
	return r
}

// Decode decodes data, a file of the given format, into mcpward's format.
// It fails only when the document as a whole cannot be read (a
// *MalformedError) or format is unknown (a *refusal.Error, Reason
// ReasonUnknownFormat); a server it cannot import is a FindingRefused and
// the others are still imported. Root keys other than the servers' are
// ignored (these files hold other settings). VS Code's and Gemini CLI's
// files may hold comments and trailing commas (JSON with comments); the
// other JSON formats are strict JSON. Decode is pure, safe for
// concurrent use and deterministic.
func Decode(format Format, data []byte, opts Options) (*Result, error) {
	var servers []imported
	var err error
	switch format {
	case ClaudeCode, ClaudeDesktop, Cursor, Gemini, VSCode:
		servers, err = decodeJSONFormat(format, data, opts)
	case Codex:
		servers, err = decodeCodex(data, opts)
	default:
		return nil, &refusal.Error{Class: refusal.Config, Reason: ReasonUnknownFormat}
	}
	if err != nil {
		return nil, err
	}
	return assemble(servers)
}

// imported is one server as a format decoder left it: an entry in our
// format, or refused.
type imported struct {
	name     string
	entry    outEntry
	disabled bool
	refused  bool
	findings []Finding
}

func (s *imported) drop(field, reason string) {
	s.findings = append(s.findings, Finding{Server: s.name, Kind: FindingDropped, Field: field, Reason: reason})
}

// refuse marks the server refused; only the first refusal is kept, and
// the dropped fields of a refused server are not reported.
func (s *imported) refuse(field, reason string) {
	if s.refused {
		return
	}
	s.refused = true
	s.findings = []Finding{{Server: s.name, Kind: FindingRefused, Field: field, Reason: reason}}
}

// outEntry is one server in our format, in the field order we write.
type outEntry struct {
	Type          string            `json:"type"`
	Command       string            `json:"command,omitempty"`
	Args          []string          `json:"args,omitempty"`
	Env           map[string]string `json:"env,omitempty"`
	Cwd           string            `json:"cwd,omitempty"`
	URL           string            `json:"url,omitempty"`
	Headers       map[string]string `json:"headers,omitempty"`
	HeadersHelper []string          `json:"headersHelper,omitempty"`
	OAuth         *outOAuth         `json:"oauth,omitempty"`
	Timeout       int64             `json:"timeout,omitempty"`
	// IncludeTools and ExcludeTools are the tool filters; nil is absent,
	// and an empty non-nil IncludeTools (no tool at all) is written as []
	// (omitzero keeps it: dropping it would widen the server).
	IncludeTools []string `json:"includeTools,omitzero"`
	ExcludeTools []string `json:"excludeTools,omitzero"`
}

type outOAuth struct {
	ClientID              string   `json:"clientId,omitempty"`
	Scopes                []string `json:"scopes,omitempty"`
	CallbackPort          int      `json:"callbackPort,omitempty"`
	AuthServerMetadataURL string   `json:"authServerMetadataUrl,omitempty"`
}

// marshal encodes v as JSON with two-space indentation and no HTML
// escaping, ending in a newline.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// check runs one server's entry through core/definition's decoder and
// refuses it with the decoder's word when it would not be a usable
// definition there, so the output never holds an entry mcpward would not
// use as written.
func check(s *imported) {
	if s.refused {
		return
	}
	data, err := marshal(map[string]map[string]outEntry{"mcpServers": {s.name: s.entry}})
	if err != nil {
		s.refuse("", ReasonInvalidField)
		return
	}
	doc := definition.Decode(definition.Source{Data: data})
	switch {
	case doc.Problem != nil || len(doc.Entries) != 1:
		s.refuse("", ReasonInvalidField)
	case doc.Entries[0].Def == nil:
		s.refuse(doc.Entries[0].Field, doc.Entries[0].Problem)
	case doc.Entries[0].Def.Refusal != "":
		s.refuse("", doc.Entries[0].Def.Refusal)
	}
}

// assemble builds the Result from the decoded servers.
func assemble(servers []imported) (*Result, error) {
	res := &Result{}
	out := map[string]outEntry{}
	for i := range servers {
		s := &servers[i]
		check(s)
		res.Findings = append(res.Findings, s.findings...)
		if s.refused {
			continue
		}
		out[s.name] = s.entry
		res.Servers = append(res.Servers, s.name)
		if s.disabled {
			res.Disabled = append(res.Disabled, s.name)
			res.Findings = append(res.Findings, Finding{Server: s.name, Kind: FindingDisabled, Reason: ReasonDisabled})
		}
	}
	slices.Sort(res.Servers)
	slices.Sort(res.Disabled)
	slices.SortStableFunc(res.Findings, func(a, b Finding) int {
		if c := strings.Compare(a.Server, b.Server); c != 0 {
			return c
		}
		return strings.Compare(a.Field, b.Field)
	})
	doc := struct {
		Servers  map[string]outEntry `json:"mcpServers"`
		Disabled []string            `json:"disabledMcpServers,omitempty"`
	}{out, res.Disabled}
	data, err := marshal(doc)
	if err != nil {
		return nil, &refusal.Error{Class: refusal.Internal, Reason: "encode_failed"}
	}
	res.JSON = data
	return res, nil
}

// validName reports whether s is a valid mcpward server name: 1 to 64
// bytes of [A-Za-z0-9_.-].
func validName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}

// printable returns a document key in a form safe to report: itself when
// it is a valid name, else its ASCII-quoted form cut to 64 bytes of the
// key.
func printable(key string) string {
	if validName(key) {
		return key
	}
	if len(key) > 64 {
		n := 64
		for n > 0 && !utf8.RuneStart(key[n]) {
			n--
		}
		return strconv.QuoteToASCII(key[:n]) + "..."
	}
	return strconv.QuoteToASCII(key)
}
